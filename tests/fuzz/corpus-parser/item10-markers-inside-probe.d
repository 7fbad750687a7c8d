provider mk {
	probe a(int x,
# 30 "y.d"
		char *y
# 40 "y.d"
	)
# 50 "y.d"
	;
	probe b(
# 60 "z.d"
	int bad_t q);
};
