inline int x = 3
provider rec {
	probe a(int)
# 20 "x.d"
	probe b(int);
};
