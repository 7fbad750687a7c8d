provider foo2 { probe a(); };
provider pppppppppppppppppppppppppppppppppppppppppppppppppppppppppppp { probe b(); };
provider rrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrr {
	probe sssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssss();
	probe qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq();
};
