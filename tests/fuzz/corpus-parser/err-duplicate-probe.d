provider dup {
	probe start(int, char *);
	probe start(int, char *);
	probe start(long);
};
