provider ic {
	probe a(unsigned, unsigned int, unsigned long, long long int, const int, unsigned char);
	probe b(short, unsigned short int, long int, unsigned long long, signed char, char);
	probe c(long unsigned int, int const, signed, long double, float, _Bool);
};
