#!/usr/sbin/dtrace -s
# file: server.c -- a comment line, as SystemTap's dtrace allows
// a C++ comment at file scope
provider hc {
# probes of the request path
	probe req(int); // the request id
	#
	probe done(); // don't mind the apostrophe
};
