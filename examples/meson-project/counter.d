/* libcounter's provider (examples/meson-project). */
provider counter {
	/* A name counted: its length, and the running total. */
	probe add(unsigned long length, unsigned long total);
};
