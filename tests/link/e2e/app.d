/* The executable's provider in the -G end-to-end test. */
provider e2eapp {
	probe tick(int, char *);
	probe start__up();
};
