provider ml {
	probe spread(
		int a,
  	  char *b,

		uint64_t
		c
	);
    	probe	tabs	(	int	,	long	)	;
};
