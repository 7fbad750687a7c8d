provider xn {
	probe p(int a, int b) : (int c, int a);
	probe q(int, int) : (int a);
	probe r(int a) : (int);
};
