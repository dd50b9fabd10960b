// apache-md5 ships no types: it hashes a password, with a fresh salt or the salt of an existing $apr1$ hash.
declare module 'apache-md5' {
  export default function apacheMd5(password: string, saltOrHash?: string): string;
}
