package tools

// ClaudeTwins exposes ccTwins to the README generator.
var ClaudeTwins = ccTwins
