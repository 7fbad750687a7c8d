provider twin {
	probe close(int);
	probe open(int, char const*);
};
