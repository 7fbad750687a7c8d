provider vm {
	probe a(void, int);
	probe b(int, void);
	probe c(void v);
	probe d(void *fine, void);
	probe ok(void);
};
