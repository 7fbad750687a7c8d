provider ms {
	probe a(int)
	probe b(int);
	probe c(int)
}
