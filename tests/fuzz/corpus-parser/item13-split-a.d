typedef struct conn conn_t;
provider split {
	probe open(conn_t *);
};
#pragma D attributes Evolving/Evolving/Common provider split provider
