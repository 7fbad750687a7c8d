provider uc {
	probe a(int);
	/* never closed
	probe b(int);
};
