provider ut {
	probe a(my_handle_t h, int);
	probe b(int, struct ok *, uint32 x);
};
