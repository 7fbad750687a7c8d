/* The most arguments a probe site carries. */
provider twelve {
	probe max(int, long, char *, void *, short, unsigned, int, long, char *, void *, int, long);
	probe ten(int a0, int a1, int a2, int a3, int a4, int a5, int a6, int a7, int a8, int a9);
};
