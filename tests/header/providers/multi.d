/* Several providers in one file, an empty provider, tabs and multi-line probes. */
provider first {
	probe one(int);
	probe	two(int	a,
		char *b,
	    long c);
};

provider empty {
	/* no probes yet */
};

provider Xserver {
	probe request__start(void *req, int type, int len,
			     int client, void *cl);
	probe client__connect(int id, int fd);
};
