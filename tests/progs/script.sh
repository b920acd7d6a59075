#!/bin/sh -e
# A script: noclobber exec runs its interpreter, as execve does.
echo "script $# $*"
exit 2
