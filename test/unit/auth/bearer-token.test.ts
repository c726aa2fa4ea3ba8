import { describe, expect, it } from 'vitest'
import { bearerToken } from '../../../src/auth/bearer-token.js'

const KEY = 'ask_0123abcd_Zz9-._~+/'

describe('bearerToken', () => {
  it.each([
    ['Bearer ask_0123abcd_Zz9-._~+/', KEY],
    ['bearer ask_0123abcd_Zz9-._~+/', KEY],
    ['BEARER ask_0123abcd_Zz9-._~+/', KEY],
    ['Bearer   ask_0123abcd_Zz9-._~+/  ', KEY],
    ['Bearer dG9rZW4==', 'dG9rZW4==']
  ])('reads the token of %j', (header, token) => {
    expect(bearerToken(header)).toBe(token)
  })

  it.each([
    ['no header', undefined],
    ['an empty header', ''],
    ['a bare token', KEY],
    ['another scheme', `Basic ${KEY}`],
    ['the scheme with no token', 'Bearer '],
    ['the scheme with no space', `Bearer${KEY}`],
    ['text before the scheme', `xBearer ${KEY}`],
    ['two tokens', `Bearer ${KEY} ${KEY}`],
    ['two Authorization headers as the server joins them', `Bearer ${KEY}, Bearer ${KEY}`],
    ['a character outside token68', 'Bearer ask_0123abcd!'],
    ['padding inside the token', 'Bearer dG9r=ZW4']
  ])('finds no token in %s', (_label, header) => {
    expect(bearerToken(header)).toBeUndefined()
  })
})
