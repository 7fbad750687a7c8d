provider first {
	probe a(int);
};
provider second {
	probe b(char *);
};
provider empty {
	/* nothing here yet */
};
provider first {
	probe a(int);
	probe c();
};
