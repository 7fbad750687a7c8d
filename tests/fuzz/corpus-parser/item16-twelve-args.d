provider twelve {
	probe all(int a1, long a2, char *a3, void *a4, uint8_t a5, uint16_t a6,
	          uint32_t a7, uint64_t a8, int8_t a9, int16_t a10, int32_t a11, int64_t a12);
};
