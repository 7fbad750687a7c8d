#pragma D attributes Evolving/Evolving/Common provider before provider
#pragma   D   attributes	Internal/Private/Unknown   provider before module
#pragma D attributes Obsolete/External/CPU provider before function
provider before {
	probe p();
};
#pragma D attributes Unstable/Stable/Platform provider before name
#pragma D attributes Standard / Stable / Group provider before args

provider after {
	probe q();
};
#pragma D attributes Stable/Stable/ISA provider after provider
#pragma D attributes evolving/UNSTABLE/common provider after args
#pragma D attributes Private provider after name
#pragma D attributes Stable/Evolving/Common provider not_declared_here provider
