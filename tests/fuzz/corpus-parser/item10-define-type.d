#define TransactionId unsigned int
provider dt {
	probe start(TransactionId);
};
