# file: comments.d -- a '#' comment line, accepted without -C as SystemTap does
// A C++ comment before the provider
provider cmt {
	// probe hidden(int); is commented out and must not appear
	probe visible(int a); // trailing comment
	# a hash comment inside the provider
	probe also__visible(char *s); /* doc */
};
