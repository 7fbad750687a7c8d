/* The greeter's provider (a stand-alone Autotools project using an installed usdtkit). */
provider greeter {
	/* About to greet someone: the name and its position on the command line. */
	probe greet(char *name, int index);
	/* All greeted: how many, and the total length of the names. */
	probe done(int count, unsigned long total_length);
};
