/* A probe from the static library. */
provider bsbeta {
	probe sum(long total);
	probe idle();
};
