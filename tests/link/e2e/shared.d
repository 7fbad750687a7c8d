/* One provider linked, with its own -G object, into two shared objects. */
provider e2eshared {
	probe work(int count);
};
