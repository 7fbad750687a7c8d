/*
 * The quickstart provider: a toy request server's probes.
 * `dtrace -h` turns this into quickstart_probes.h; `dtrace -G` into the
 * object that defines the semaphores.
 */
provider quickstart {
	/* A request arrived: its id and the path asked for. */
	probe request__start(int id, char *path);
	/* A request finished: id, status code, latency in microseconds. */
	probe request__done(int id, int status, long latency_us);
	/* Costly to prepare: only built while someone is tracing. */
	probe request__summary(char *text);
};

#pragma D attributes Evolving/Evolving/Common provider quickstart provider
#pragma D attributes Evolving/Evolving/Common provider quickstart args
