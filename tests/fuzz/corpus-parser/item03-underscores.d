provider us {
	probe a__b();
	probe transaction__start__now();
	probe mixed_single__double_x();
	probe __lead();
	probe trail__();
	probe x___y();
};
