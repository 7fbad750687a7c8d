provider bsgamma {
	probe tick__tock(unsigned int n);
};
