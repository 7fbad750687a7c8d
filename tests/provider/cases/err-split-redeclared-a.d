/* One provider declared in three files given to one dtrace -G (each file
   also has its own dtrace -h). b.d repeats a.d's probes, in another order
   and spelling: allowed. c.d gives one another signature, and declares one
   twice in its block: errors pointing into c.d. */
provider twin {
	probe open(int fd, const char *path);
	probe close(int fd);
};
