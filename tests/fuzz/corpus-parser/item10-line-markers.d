# 1 "probes.d"
# 1 "<built-in>"
# 1 "<command-line>"
# 1 "probes.d"
# 1 "types.h" 1
typedef unsigned int LocalTransactionId;
# 2 "probes.d" 2

provider pg {
	probe lock__wait(LocalTransactionId, int);
#line 40 "other.d"
	probe other(int);
# 7 "probes.d"
	probe back(char *);
};
