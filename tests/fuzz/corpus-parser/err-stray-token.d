provider st {
	probe a(int); )
	probe b(int);
	= probe c(long);
};
) ;
