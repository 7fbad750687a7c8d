provider nu {
	probe all_named(int a, long b, char *c);
	probe none_named(int, long, char *);
	probe both(int a, long, char *c, unsigned);
};
