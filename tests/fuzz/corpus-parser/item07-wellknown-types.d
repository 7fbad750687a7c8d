provider wk {
	probe fixed(int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t);
	probe sys(uintptr_t, intptr_t, size_t, ssize_t, uintmax_t, pid_t, zoneid_t, bool, off_t);
	probe d(string s, string *sp, uint_t, hrtime_t, caddr_t);
};
