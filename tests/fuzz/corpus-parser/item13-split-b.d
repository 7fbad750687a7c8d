#pragma D attributes Stable/Stable/Common provider split args
provider split {
	probe open(conn_t *);
	probe close(conn_t *, int);
};
