/* leading comment */ provider /* between */ cmt /* name */ {
	/**
	 * Javadoc style.
	 * @param a the first {with braces} and "quotes"
	 */
	probe /* here */ p1 /* and here */ ( /* first */ int a /* after a */ , /* second */ char * /* star */ b ) /* end */ ;
	/* a commented-out probe: probe gone(int); */
	probe p2(/***/int/**/);
} /* before semicolon */ ;
/* trailing comment with a * and / inside */
