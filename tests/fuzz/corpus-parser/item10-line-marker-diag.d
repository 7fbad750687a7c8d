# 1 "orig.d"
# 40 "orig.d"
provider lm {
	probe fine(int);
	probe bad(nosuch_t);
};
