/* The shared library's provider (no #pragma: DTrace's default attributes). */
provider ltlib {
	probe work__item(int n, char *tag);
};
