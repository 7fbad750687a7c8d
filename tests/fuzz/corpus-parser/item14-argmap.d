typedef struct native_conn native_t;
typedef struct conn_info { int fd; } conn_info_t;
provider am {
	probe p(native_t *a, int c) : (conn_info_t *a, int c);
	probe place(int i, int j) : (int j, int i, int i, int j);
	probe fewer(char *s, int n, long m) : (long m);
	probe none(int x) : ();
};
