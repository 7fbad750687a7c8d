provider twin {
	probe open(long fd);
	probe close(int fd);
	probe close(int fd);
	probe flush(int);
};
