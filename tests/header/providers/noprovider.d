/* No provider at all: only a D clause (CPython's configure does this). */
BEGIN
{
	exit(0);
}
