provider sp {
	probe spaced (int a);
	probe many    	   (char *, long);
	probe
		newline
		(
		int
		);
};
