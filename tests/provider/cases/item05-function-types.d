typedef void (**fpp_t)(int);
typedef int fn_t(void);
provider f { probe a(fpp_t, fn_t *, fn_t, int (**x)(char *)); };
