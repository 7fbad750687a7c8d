/* A probe declared twice in one provider block is an error (DTrace: "probe
   redeclared"), whatever its signature; another block may repeat it. */
provider rd {
	probe start(int, char *);
	probe stop();
	probe start(int, char *);
};
provider rd {
	probe start(int, char *);
	probe stop();
	probe stop();
	probe start(long);
	probe more(int);
};
