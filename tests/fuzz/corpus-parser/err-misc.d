provder typo { probe a(); };
probe outside(int);
#pragma D attributes Evolving/Bogus/Common provider misc provider
provider misc {
	probe v(int, ...);
	probe a__b();
	probe A_B(int);
	probe bad(unsigned float);
};
