provider Xserver {
	probe ClientConnect(int, char *);
	probe AllocObject__entry(int);
	probe monitor__notifyAll(uintptr_t);
};
