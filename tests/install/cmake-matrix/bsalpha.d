provider bsalpha {
	probe hit(int where, char *what);
};
