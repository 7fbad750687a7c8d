typedef void handler_t(int);
typedef int arr_t[4];
provider edge {
	probe fp(void (*cb)(int, char *), int (*)(void), handler_t *h);
	probe arr(int a[4], char names[2][8], arr_t x, arr_t *px);
	probe q(volatile int *, int * restrict r, const volatile char *cv);
};
