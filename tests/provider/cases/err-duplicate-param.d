provider dp {
	probe p(int a, char *b, long a);
	probe q(int, int, int x, int y);
	probe r(int i, int j) : (int j, int i, int i, int j);
};
