#!/bin/bash
# (being written)
exit 77
