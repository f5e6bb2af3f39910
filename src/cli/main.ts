#!/usr/bin/env node
console.log('crew: under construction');
