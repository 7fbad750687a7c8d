provider bom { # the provider
	probe a(int); # trailing comment, with an apostrophe: it's fine
};
